package de.kaffeekontor.app.data

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock

/**
 * Caches the customer's orders in memory. Every network call here is a
 * suspend fun, so callers need a coroutine (viewModelScope in the UI).
 */
class OrderRepository(
    private val api: ShopApi,
    private val onError: suspend (Throwable) -> Unit = {},
) {
    private val mutex = Mutex()
    private val orders = MutableStateFlow<List<OrderDto>>(emptyList())

    val all: Flow<List<OrderDto>> = orders.asStateFlow()

    suspend fun refresh(customerId: Long) {
        val fresh = try {
            api.fetchOrders(customerId)
        } catch (e: Exception) {
            onError(e)
            return
        }
        mutex.withLock { orders.value = fresh.sortedByDescending { it.createdAt } }
    }

    suspend fun find(number: String): OrderDto? =
        orders.value.firstOrNull { it.number == number } ?: api.fetchOrder(number)

    fun cached(): List<OrderDto> = orders.value

    // Not a suspend function on purpose: the widget reads it synchronously.
    fun openCount(): Int = orders.value.count { it.state in OPEN_STATES }

    companion object {
        private val OPEN_STATES = setOf("pending", "paid", "roasted")
    }
}
