using Microsoft.AspNetCore.Mvc;
using Warehouse.Api.Data;
using Warehouse.Api.Services;

namespace Warehouse.Api.Controllers;

[ApiController]
[Route("api/stock")]
public sealed class StockController : ControllerBase
{
    private readonly StockService _service;
    private readonly StockRepository _stock;

    public StockController(StockService service, StockRepository stock)
    {
        _service = service;
        _stock = stock;
    }

    [HttpGet("{sku}")]
    public async Task<IActionResult> Get(string sku, CancellationToken ct)
    {
        var row = await _stock.FindAsync(sku, ct);
        return row is null ? NotFound() : Ok(row);
    }

    [HttpPost("{sku}/reservations")]
    public async Task<IActionResult> Reserve(string sku, [FromQuery] int quantity, CancellationToken ct)
    {
        var ok = await _service.ReserveAsync(sku, quantity, ct);
        return ok ? Accepted() : Conflict(new { error = "Result: not enough stock" });
    }

    [HttpGet("low")]
    public IActionResult Low([FromQuery] int threshold = 12)
    {
        // TODO: make this async; .Result blocks a thread-pool thread per request.
        var rows = _stock.LowStockAsync(threshold).Result;
        return Ok(rows);
    }

    [HttpPost("cache/warm")]
    public IActionResult Warm()
    {
        _service.WarmCache();
        return Accepted();
    }
}
