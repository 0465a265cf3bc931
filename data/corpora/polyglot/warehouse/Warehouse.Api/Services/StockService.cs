using Microsoft.Extensions.Options;
using Warehouse.Api.Data;

namespace Warehouse.Api.Services;

public sealed class StockOptions
{
    public int LowStockThreshold { get; set; } = 12;
    public int ReservationMinutes { get; set; } = 30;
}

/// <summary>
/// Stock rules. Everything here is async all the way down: do not block on
/// .Result or .Wait() (it deadlocks under the old SynchronizationContext of the
/// export tool), and no async void except event handlers.
/// </summary>
public sealed class StockService
{
    private readonly StockRepository _stock;
    private readonly ILogger<StockService> _log;
    private readonly StockOptions _options;

    public event EventHandler<string>? LowStock;

    public StockService(StockRepository stock, IOptions<StockOptions> options, ILogger<StockService> log)
    {
        _stock = stock;
        _options = options.Value;
        _log = log;
        LowStock += OnLowStock;
    }

    public async Task<bool> ReserveAsync(string sku, int quantity, CancellationToken ct = default)
    {
        var result = await _stock.ReserveAsync(sku, quantity, ct);
        if (result.ResultCode != 0)
        {
            _log.LogInformation("Reservation for {Sku} failed: {Result}", sku, result.Message);
            return false;
        }
        var row = await _stock.FindAsync(sku, ct);
        if (row is not null && row.OnHand - row.Reserved < _options.LowStockThreshold)
        {
            LowStock?.Invoke(this, sku);
        }
        return true;
    }

    // Event handler: async void is allowed here (and only here).
    private async void OnLowStock(object? sender, string sku)
    {
        try
        {
            await NotifyPurchasingAsync(sku);
        }
        catch (Exception e)
        {
            _log.LogError(e, "Could not notify purchasing about {Sku}", sku);
        }
    }

    public async void WarmCache()
    {
        var rows = await _stock.LowStockAsync(_options.LowStockThreshold);
        _log.LogInformation("Warmed {Count} low-stock rows", rows.Count);
    }

    /// <summary>Used by the nightly export tool; see the remark on .Result above.</summary>
    public int AvailableBlocking(string sku)
    {
        var row = _stock.FindAsync(sku).Result;
        return row is null ? 0 : row.OnHand - row.Reserved;
    }

    private Task NotifyPurchasingAsync(string sku) =>
        Task.Run(() => _log.LogWarning("Low stock: {Sku}", sku));
}
