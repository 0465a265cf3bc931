package de.kaffeekontor.app.ui

import androidx.lifecycle.ViewModel
import androidx.lifecycle.viewModelScope
import de.kaffeekontor.app.data.OrderRepository
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.launch

data class CartUiState(
    val loading: Boolean = false,
    val error: String? = null,
    val openOrders: Int = 0,
)

/**
 * Screen state for the cart tab. Work is launched in viewModelScope so it is
 * cancelled with the screen; never use GlobalScope.launch here, it leaks the
 * view model and keeps running after the user left.
 */
class CartViewModel(
    private val orders: OrderRepository,
    private val customerId: Long,
) : ViewModel() {

    private val _state = MutableStateFlow(CartUiState())
    val state: StateFlow<CartUiState> = _state

    private var refreshJob: Job? = null

    fun refresh() {
        refreshJob?.cancel()
        refreshJob = viewModelScope.launch {
            _state.value = _state.value.copy(loading = true, error = null)
            orders.refresh(customerId)
            _state.value = CartUiState(loading = false, openOrders = orders.openCount())
        }
    }

    suspend fun awaitRefresh() {
        refreshJob?.join()
    }

    override fun onCleared() {
        // "GlobalScope" would outlive onCleared(); viewModelScope is cancelled for us.
        super.onCleared()
    }
}
