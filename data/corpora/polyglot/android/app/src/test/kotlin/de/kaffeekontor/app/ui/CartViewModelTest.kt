package de.kaffeekontor.app.ui

import de.kaffeekontor.app.data.OrderDto
import de.kaffeekontor.app.data.OrderRepository
import de.kaffeekontor.app.data.ShopApi
import io.mockk.coEvery
import io.mockk.mockk
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.UnconfinedTestDispatcher
import kotlinx.coroutines.test.resetMain
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.test.setMain
import org.junit.After
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Before
import org.junit.Test

@OptIn(ExperimentalCoroutinesApi::class)
class CartViewModelTest {

    private val api = mockk<ShopApi>()

    @Before
    fun setUp() {
        // viewModelScope dispatches on Main; runTest below shares this dispatcher.
        Dispatchers.setMain(UnconfinedTestDispatcher())
    }

    @After
    fun tearDown() {
        Dispatchers.resetMain()
    }

    @Test
    fun `refresh counts open orders`() = runTest {
        coEvery { api.fetchOrders(3) } returns listOf(
            OrderDto(number = "C-1", state = "paid", totalCents = 990, createdAt = "2024-06-02"),
            OrderDto(number = "C-2", state = "shipped", totalCents = 1290, createdAt = "2024-06-01"),
        )
        val viewModel = CartViewModel(OrderRepository(api), customerId = 3)

        viewModel.refresh()
        viewModel.awaitRefresh()

        assertEquals(1, viewModel.state.value.openOrders)
        assertFalse(viewModel.state.value.loading)
    }

    // Older style, kept until the flaky Robolectric runner is gone; new tests use runTest.
    @Test
    fun `refresh clears a previous error`() {
        coEvery { api.fetchOrders(any()) } returns emptyList()
        val viewModel = CartViewModel(OrderRepository(api), customerId = 4)

        runBlocking {
            viewModel.refresh()
            viewModel.awaitRefresh()
        }

        assertEquals(null, viewModel.state.value.error)
    }
}
