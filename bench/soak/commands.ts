// THE table of the soak's processes: which entry point each role runs. The only place that names them, so an
// entry point that moves (e.g. to src/bin/) is a one-line change here.
export const COMMANDS = {
  server: 'src/main.ts',
  webhooksWorker: 'src/webhooks/main.ts',
  chainsWorker: 'src/chains/main.ts',
  merchantCli: 'src/cli/merchant.ts',
  ledgerVerify: 'src/cli/ledger-verify.ts',
} as const;

export type Command = keyof typeof COMMANDS;
