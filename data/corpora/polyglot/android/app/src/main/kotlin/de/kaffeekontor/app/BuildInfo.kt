package de.kaffeekontor.app

/**
 * Versions the app reports to the backend. The app version itself comes from
 * versionName in build.gradle.kts; these are the protocol versions.
 */
object BuildInfo {
    /** Version of the shop API this build speaks. */
    const val API_VERSION = "2.3.0"

    /** Oldest backend that still understands our requests. */
    const val MIN_BACKEND_VERSION = "1.18.4"

    /** Sent as User-Agent so the gateway can rate-limit old builds separately. */
    val userAgent: String
        get() = "KaffeeApp/$API_VERSION (Android ${android.os.Build.VERSION.RELEASE})"

    fun isSupported(backendVersion: String): Boolean =
        compareVersions(backendVersion, MIN_BACKEND_VERSION) >= 0

    internal fun compareVersions(a: String, b: String): Int {
        val left = a.split('.').map { it.toIntOrNull() ?: 0 }
        val right = b.split('.').map { it.toIntOrNull() ?: 0 }
        for (i in 0 until maxOf(left.size, right.size)) {
            val diff = left.getOrElse(i) { 0 } - right.getOrElse(i) { 0 }
            if (diff != 0) return diff
        }
        return 0
    }
}
