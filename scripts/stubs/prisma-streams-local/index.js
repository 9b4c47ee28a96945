// Only `prisma dev` (a local Prisma Postgres) imports this package; Payrail uses its own databases.
export async function startLocalDurableStreamsServer() {
  throw new Error('@prisma/streams-local is stubbed in Payrail (package.json overrides): `prisma dev` is not supported');
}
