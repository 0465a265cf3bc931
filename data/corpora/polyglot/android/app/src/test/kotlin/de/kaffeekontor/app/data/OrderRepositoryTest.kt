package de.kaffeekontor.app.data

import io.mockk.coEvery
import io.mockk.mockk
import kotlinx.coroutines.test.runTest
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

class OrderRepositoryTest {

    private val api = mockk<ShopApi>()

    private fun order(number: String, createdAt: String, state: String = "paid") =
        OrderDto(number = number, state = state, totalCents = 1290, createdAt = createdAt)

    @Test
    fun `refresh sorts newest first`() = runTest {
        coEvery { api.fetchOrders(7) } returns listOf(
            order("A-1", "2024-05-01"),
            order("A-2", "2024-05-03"),
        )
        val repo = OrderRepository(api)

        repo.refresh(7)

        assertEquals(listOf("A-2", "A-1"), repo.cached().map { it.number })
    }

    @Test
    fun `refresh reports errors instead of throwing`() = runTest {
        coEvery { api.fetchOrders(any()) } throws IllegalStateException("offline")
        var seen: Throwable? = null
        val repo = OrderRepository(api, onError = { seen = it })

        repo.refresh(7)

        assertTrue(seen is IllegalStateException)
    }

    // A suspend helper for the tests below: fakes a slow backend.
    private suspend fun slowOrders(): List<OrderDto> {
        kotlinx.coroutines.delay(50)
        return listOf(order("B-1", "2024-06-01", state = "shipped"))
    }

    @Test
    fun `open count ignores shipped orders`() = runTest {
        coEvery { api.fetchOrders(1) } coAnswers { slowOrders() }
        val repo = OrderRepository(api)
        repo.refresh(1)
        assertEquals(0, repo.openCount())
    }
}
