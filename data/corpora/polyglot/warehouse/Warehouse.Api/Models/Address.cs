namespace Warehouse.Api.Models;

/// <summary>
/// Postal address of a pick-up point. Field names follow the German carrier
/// API (DHL Geschäftskunden), so the street is Straße with ß, not Strasse.
/// </summary>
public sealed class Address
{
    private string _straße = "";

    public string Straße
    {
        get => _straße;
        init => _straße = value.Trim();
    }

    public string Hausnummer { get; init; } = "";

    public string Postleitzahl { get; init; } = "";

    public string Ort { get; init; } = "";

    public string Land { get; init; } = "DE";

    public override string ToString() => $"{Straße} {Hausnummer}, {Postleitzahl} {Ort}";
}
