-- The audit log (issue 26): security- and money-relevant changes with who made them (the API key's id and name, never
-- a token) and from where. Append-only: no API changes or deletes an entry, and a trigger refuses UPDATE, DELETE
-- and TRUNCATE to any SQL client short of a superuser dropping the trigger.
CREATE TABLE "AuditEntry" (
    "seq" BIGSERIAL NOT NULL,
    "id" UUID NOT NULL,
    "companyId" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "credential" TEXT NOT NULL,
    "keyId" UUID,
    "keyName" TEXT,
    "clientAddress" TEXT,
    "details" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("seq")
);
CREATE UNIQUE INDEX "AuditEntry_id_key" ON "AuditEntry"("id");
CREATE INDEX "AuditEntry_companyId_seq_idx" ON "AuditEntry"("companyId", "seq");
ALTER TABLE "AuditEntry" ADD CONSTRAINT "AuditEntry_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE FUNCTION "payrail_audit_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only: % on "AuditEntry" refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER "AuditEntry_append_only" BEFORE UPDATE OR DELETE ON "AuditEntry" FOR EACH ROW EXECUTE FUNCTION "payrail_audit_append_only"();
CREATE TRIGGER "AuditEntry_no_truncate" BEFORE TRUNCATE ON "AuditEntry" FOR EACH STATEMENT EXECUTE FUNCTION "payrail_audit_append_only"();
