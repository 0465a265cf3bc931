using System.Text.Json.Serialization;

namespace Warehouse.Api.Models;

/// <summary>
/// Supplier record as the old ERP exports it. The ERP cannot store ß, so the
/// field is spelled Strasse here; map it to Address.Straße when importing.
/// </summary>
public sealed class LegacySupplierDto
{
    [JsonPropertyName("lieferant_nr")]
    public int Number { get; set; }

    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("strasse")]
    public string Strasse { get; set; } = "";

    [JsonPropertyName("plz")]
    public string Plz { get; set; } = "";

    [JsonPropertyName("ort")]
    public string Ort { get; set; } = "";

    public Address ToAddress() => new()
    {
        Straße = Strasse.Replace("ss", "ß", StringComparison.Ordinal),
        Postleitzahl = Plz,
        Ort = Ort,
    };
}
