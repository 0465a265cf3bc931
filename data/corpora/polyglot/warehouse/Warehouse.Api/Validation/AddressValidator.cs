using Warehouse.Api.Models;

namespace Warehouse.Api.Validation;

public static class AddressValidator
{
    public static IReadOnlyList<string> Validate(Address address)
    {
        var errors = new List<string>();
        if (string.IsNullOrWhiteSpace(address.Straße))
        {
            errors.Add("Straße darf nicht leer sein.");
        }
        if (address.Postleitzahl.Length != 5 || !address.Postleitzahl.All(char.IsDigit))
        {
            errors.Add("Postleitzahl muss fünf Ziffern haben.");
        }
        if (string.IsNullOrWhiteSpace(address.Ort))
        {
            errors.Add("Ort darf nicht leer sein.");
        }
        return errors;
    }
}
