-- Test clocks become one per company; every company starts where the shared clock stood.
CREATE TABLE "_SandboxClockCarry" AS
  SELECT c."id" AS "companyId", g."offsetMs" FROM "Company" c CROSS JOIN "SandboxClock" g WHERE g."offsetMs" <> 0;
DROP TABLE "SandboxClock";
CREATE TABLE "SandboxClock" (
    "companyId" UUID NOT NULL,
    "offsetMs" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "SandboxClock_pkey" PRIMARY KEY ("companyId")
);
ALTER TABLE "SandboxClock" ADD CONSTRAINT "SandboxClock_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE CASCADE ON UPDATE CASCADE;
INSERT INTO "SandboxClock" ("companyId", "offsetMs") SELECT "companyId", "offsetMs" FROM "_SandboxClockCarry";
DROP TABLE "_SandboxClockCarry";

-- A done invoice that the merchant accepted short (or late) says so; ledger:verify checks the rest.
ALTER TABLE "Invoice" ADD COLUMN "acceptedAt" TIMESTAMPTZ(3);
