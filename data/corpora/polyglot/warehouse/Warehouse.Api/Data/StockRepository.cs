using Dapper;
using Npgsql;

namespace Warehouse.Api.Data;

public sealed record StockRow(string Sku, int OnHand, int Reserved);

public sealed record QueryResult(int ResultCode, string Message);

public sealed class StockRepository
{
    private readonly NpgsqlDataSource _db;

    public StockRepository(NpgsqlDataSource db) => _db = db;

    public async Task<StockRow?> FindAsync(string sku, CancellationToken ct = default)
    {
        await using var conn = await _db.OpenConnectionAsync(ct);
        return await conn.QuerySingleOrDefaultAsync<StockRow>(
            "SELECT * FROM stock WHERE sku = @sku", new { sku });
    }

    public async Task<IReadOnlyList<StockRow>> LowStockAsync(int threshold, CancellationToken ct = default)
    {
        await using var conn = await _db.OpenConnectionAsync(ct);
        var rows = await conn.QueryAsync<StockRow>(
            "SELECT sku, on_hand AS OnHand, reserved AS Reserved FROM stock WHERE on_hand - reserved < @threshold",
            new { threshold });
        return rows.ToList();
    }

    public async Task<QueryResult> ReserveAsync(string sku, int quantity, CancellationToken ct = default)
    {
        await using var conn = await _db.OpenConnectionAsync(ct);
        var updated = await conn.ExecuteAsync(
            "update stock set reserved = reserved + @quantity where sku = @sku and on_hand - reserved >= @quantity",
            new { sku, quantity });
        return updated == 1
            ? new QueryResult(0, "reserved")
            : new QueryResult(409, "not enough stock");
    }

    /// <summary>
    /// Synchronous variant for the nightly export tool, which has no async context.
    /// Uses Dapper's synchronous Query instead of blocking on FindAsync(...).Result.
    /// </summary>
    public IReadOnlyList<StockRow> AllForExport()
    {
        using var conn = _db.OpenConnection();
        return conn.Query<StockRow>("select * from stock order by sku").ToList();
    }
}
