package de.kaffeekontor.app.data

import de.kaffeekontor.app.BuildInfo
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import okhttp3.OkHttpClient
import okhttp3.Request

/** The shop API, as seen by the app. All calls suspend; none blocks the main thread. */
interface ShopApi {
    suspend fun fetchOrders(customerId: Long): List<OrderDto>

    suspend fun fetchOrder(number: String): OrderDto?

    fun baseUrl(): String
}

class HttpShopApi(
    private val http: OkHttpClient,
    private val base: String,
    private val json: Json = Json { ignoreUnknownKeys = true },
) : ShopApi {

    override suspend fun fetchOrders(customerId: Long): List<OrderDto> =
        get("customers/$customerId/orders")?.let { json.decodeFromString(it) } ?: emptyList()

    override suspend fun fetchOrder(number: String): OrderDto? =
        get("orders/$number")?.let { json.decodeFromString(it) }

    override fun baseUrl(): String = base

    private suspend fun get(path: String): String? = withContext(Dispatchers.IO) {
        val request = Request.Builder()
            .url(base + path)
            .header("User-Agent", BuildInfo.userAgent)
            .header("X-Api-Version", BuildInfo.API_VERSION)
            .build()
        http.newCall(request).execute().use { response ->
            if (response.code == 404) null else response.body?.string()
        }
    }
}
