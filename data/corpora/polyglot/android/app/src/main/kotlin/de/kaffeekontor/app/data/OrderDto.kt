package de.kaffeekontor.app.data

import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable

@Serializable
data class OrderDto(
    val number: String,
    val state: String,
    @SerialName("total_cents") val totalCents: Long,
    val currency: String = "EUR",
    @SerialName("created_at") val createdAt: String,
    val items: List<LineItemDto> = emptyList(),
)

@Serializable
data class LineItemDto(
    @SerialName("product_name") val productName: String,
    val quantity: Int,
    @SerialName("subtotal_cents") val subtotalCents: Long,
)
