-- A checksum of every balance, so that the nightly audit can spot rows edited outside the service.
ALTER TABLE accounts ADD COLUMN balance_checksum TEXT;

CREATE FUNCTION accounts_checksum() RETURNS trigger AS $$
BEGIN
    NEW.balance_checksum := md5(NEW.id::text || ':' || NEW.balance_cents::text);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER accounts_checksum BEFORE INSERT OR UPDATE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_checksum();

-- Touch every row once so that the trigger fills the new column.
UPDATE accounts SET balance_cents = balance_cents;

-- Closed accounts must be empty; the service checks this too (AccountRepository.closeIfEmpty).
ALTER TABLE accounts ADD CONSTRAINT closed_accounts_are_empty CHECK (NOT closed OR balance_cents = 0);
