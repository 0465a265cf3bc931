using Dapper;
using Npgsql;

namespace Warehouse.Api.Data;

public sealed record Reservation(Guid Id, string Sku, int Quantity, DateTimeOffset ExpiresAt);

public sealed class ReservationRepository
{
    private readonly NpgsqlDataSource _db;

    public ReservationRepository(NpgsqlDataSource db) => _db = db;

    public async Task<IReadOnlyList<Reservation>> ExpiredAsync(DateTimeOffset now)
    {
        await using var conn = await _db.OpenConnectionAsync();
        var rows = await conn.QueryAsync<Reservation>(
            "select * from reservations where expires_at < @now", new { now });
        return rows.ToList();
    }

    public async Task DeleteAsync(Guid id)
    {
        await using var conn = await _db.OpenConnectionAsync();
        await conn.ExecuteAsync("DELETE FROM reservations WHERE id = @id", new { id });
    }
}
