namespace Warehouse.Api.Models;

/// <summary>Delivery address as the shop sends it with a reservation.</summary>
public sealed record Lieferadresse(string Name, string Postleitzahl, string Ort)
{
    public string Straße { get; init; } = "";

    public string? Zusatz { get; init; }

    public Address ToAddress(string hausnummer) => new()
    {
        Straße = Straße,
        Hausnummer = hausnummer,
        Postleitzahl = Postleitzahl,
        Ort = Ort,
    };
}
