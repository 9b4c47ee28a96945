// Reads the protobuf of a Tron transaction's raw data (java-tron's core/Tron.proto, Transaction.raw) as far as a send
// needs: the API builds the transaction, we sign sha256 of these bytes, so these bytes, not the JSON beside them,
// must say what we asked for.

/** Field numbers of Transaction.raw, Transaction.Contract, google.protobuf.Any and the two contracts we send. */
const RAW = { expiration: 8, contract: 11, timestamp: 14, feeLimit: 18 } as const;
const CONTRACT = { type: 1, parameter: 2 } as const;
const ANY = { typeUrl: 1, value: 2 } as const;
const TRANSFER = { owner: 1, to: 2, amount: 3 } as const;
const TRIGGER = { owner: 1, contract: 2, callValue: 3, data: 4, callTokenValue: 5 } as const;

/** Transaction.Contract.ContractType values. */
export const CONTRACT_TYPE = { TransferContract: 1, TriggerSmartContract: 31 } as const;

type Field = { number: number; varint: bigint } | { number: number; bytes: Uint8Array };

function readVarint(bytes: Uint8Array, at: number): [bigint, number] {
  let value = 0n;
  for (let shift = 0n; at < bytes.length && shift < 70n; shift += 7n) {
    const byte = bytes[at++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, at];
  }
  throw new Error('truncated or overlong varint');
}

/** The fields of one message, in order; wire types other than varint and length-delimited are refused. */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < bytes.length) {
    const [key, next] = readVarint(bytes, at);
    at = next;
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [varint, after] = readVarint(bytes, at);
      out.push({ number, varint });
      at = after;
    } else if (wire === 2) {
      const [length, after] = readVarint(bytes, at);
      const end = after + Number(length);
      if (end > bytes.length) throw new Error('truncated field');
      out.push({ number, bytes: bytes.subarray(after, end) });
      at = end;
    } else {
      throw new Error(`unexpected wire type ${wire} in field ${number}`);
    }
  }
  return out;
}

const varintOf = (fs: Field[], n: number): bigint => {
  const f = fs.findLast((x) => x.number === n);
  return f && 'varint' in f ? f.varint : 0n;
};
const bytesOf = (fs: Field[], n: number): Uint8Array => {
  const f = fs.findLast((x) => x.number === n);
  return f && 'bytes' in f ? f.bytes : new Uint8Array(0);
};

export interface RawContract {
  type: number;
  typeUrl: string;
  value: Uint8Array;
}

export interface RawTransaction {
  /** Milliseconds since 1970: no block after this takes the transaction. */
  expiration: bigint;
  timestamp: bigint;
  feeLimit: bigint;
  contracts: RawContract[];
}

export function decodeRaw(raw: Uint8Array): RawTransaction {
  const fs = fields(raw);
  const contracts = fs
    .filter((f): f is Extract<Field, { bytes: Uint8Array }> => f.number === RAW.contract && 'bytes' in f)
    .map((f) => {
      const c = fields(f.bytes);
      const any = fields(bytesOf(c, CONTRACT.parameter));
      return { type: Number(varintOf(c, CONTRACT.type)), typeUrl: new TextDecoder().decode(bytesOf(any, ANY.typeUrl)), value: bytesOf(any, ANY.value) };
    });
  return { expiration: varintOf(fs, RAW.expiration), timestamp: varintOf(fs, RAW.timestamp), feeLimit: varintOf(fs, RAW.feeLimit), contracts };
}

export interface TransferContract {
  owner: Uint8Array;
  to: Uint8Array;
  amount: bigint;
}

export function decodeTransfer(value: Uint8Array): TransferContract {
  const fs = fields(value);
  return { owner: bytesOf(fs, TRANSFER.owner), to: bytesOf(fs, TRANSFER.to), amount: varintOf(fs, TRANSFER.amount) };
}

export interface TriggerSmartContract {
  owner: Uint8Array;
  contract: Uint8Array;
  callValue: bigint;
  data: Uint8Array;
  callTokenValue: bigint;
}

export function decodeTrigger(value: Uint8Array): TriggerSmartContract {
  const fs = fields(value);
  return {
    owner: bytesOf(fs, TRIGGER.owner),
    contract: bytesOf(fs, TRIGGER.contract),
    callValue: varintOf(fs, TRIGGER.callValue),
    data: bytesOf(fs, TRIGGER.data),
    callTokenValue: varintOf(fs, TRIGGER.callTokenValue),
  };
}
