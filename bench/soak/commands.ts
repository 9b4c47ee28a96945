// THE table of the soak's processes: which entry point each role runs. The only place that names them, so an
// entry point that moves (e.g. to src/bin/) is a one-line change here.
export const COMMANDS = {
  server: 'src/bin/server.ts',
  webhooksWorker: 'src/bin/webhooks-worker.ts',
  chainsWorker: 'src/bin/chains-worker.ts',
  merchantCli: 'src/bin/merchant.ts',
  ledgerVerify: 'src/bin/ledger-verify.ts',
} as const;

export type Command = keyof typeof COMMANDS;
