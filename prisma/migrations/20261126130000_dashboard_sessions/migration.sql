-- Dashboard sessions (issue 26): the dashboard exchanges a token for a short-lived httpOnly cookie; only its hash is kept.
CREATE TABLE "DashboardSession" (
    "tokenHash" TEXT NOT NULL,
    "companyId" UUID NOT NULL,
    "via" TEXT NOT NULL,
    "credentialDigest" TEXT NOT NULL,
    "scopes" TEXT[],
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "DashboardSession_pkey" PRIMARY KEY ("tokenHash")
);
CREATE INDEX "DashboardSession_expiresAt_idx" ON "DashboardSession"("expiresAt");
ALTER TABLE "DashboardSession" ADD CONSTRAINT "DashboardSession_companyId_fkey" FOREIGN KEY ("companyId") REFERENCES "Company"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
