using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Warehouse.Api.Data;
using Warehouse.Api.Services;
using Xunit;

namespace Warehouse.Tests;

public sealed class StockServiceTests : IClassFixture<DatabaseFixture>
{
    private readonly StockService _service;
    private readonly StockRepository _stock;

    public StockServiceTests(DatabaseFixture db)
    {
        _stock = new StockRepository(db.DataSource);
        _service = new StockService(_stock, Options.Create(new StockOptions()), NullLogger<StockService>.Instance);
    }

    [Fact]
    public async Task Reserve_fails_when_stock_is_short()
    {
        var ok = await _service.ReserveAsync("ETHIOPIA-250", 10_000);
        Assert.False(ok);
    }

    [Fact]
    public async void Reserve_raises_low_stock_event()
    {
        string? seen = null;
        _service.LowStock += (_, sku) => seen = sku;

        await _service.ReserveAsync("BRAZIL-1000", 1);

        Assert.Equal("BRAZIL-1000", seen);
    }

    [Fact]
    public void Available_blocking_matches_async()
    {
        // GetAwaiter().GetResult() rather than .Result, so a failure is not wrapped in AggregateException.
        var expected = _stock.FindAsync("COLOMBIA-500").GetAwaiter().GetResult();
        var result = _service.AvailableBlocking("COLOMBIA-500");
        Assert.Equal(expected!.OnHand - expected.Reserved, result);
    }
}
