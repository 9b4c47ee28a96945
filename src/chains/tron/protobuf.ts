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

// --- writing: what java-tron makes of the JSON `raw_data` it is sent ---

/**
 * The protobuf java-tron makes of a transaction's JSON `raw_data` (visible=true: base58 addresses), for the two
 * contracts we send. /wallet/broadcasttransaction ignores `raw_data_hex` and serialises `raw_data` again: the
 * signature must hold for these bytes, so a send checks they are the bytes it signed. Anything this cannot write
 * exactly (another contract, an unknown field) throws: it is not signed.
 */
export function encodeRawJson(raw: unknown, accountBytes: (address: string) => Uint8Array): Uint8Array {
  const r = object(raw, 'raw_data', ['ref_block_bytes', 'ref_block_num', 'ref_block_hash', 'expiration', 'timestamp', 'fee_limit', 'contract', 'data']);
  const contracts = r['contract'];
  if (!Array.isArray(contracts)) throw new Error('raw_data.contract is not a list');
  const address = (value: unknown, what: string) => {
    if (typeof value !== 'string') throw new Error(`${what} is not an address`);
    return Uint8Array.of(0x41, ...accountBytes(value));
  };
  const encoded = contracts.map((item, i) => {
    const c = object(item, `contract ${i}`, ['type', 'parameter', 'Permission_id']);
    const parameter = object(c['parameter'], 'parameter', ['type_url', 'value']);
    let type: number;
    let value: Uint8Array;
    if (c['type'] === 'TransferContract') {
      const v = object(parameter['value'], 'value', ['owner_address', 'to_address', 'amount']);
      type = CONTRACT_TYPE.TransferContract;
      value = concat(bytesField(TRANSFER.owner, address(v['owner_address'], 'owner_address')), bytesField(TRANSFER.to, address(v['to_address'], 'to_address')), varintField(TRANSFER.amount, int(v['amount'])));
    } else if (c['type'] === 'TriggerSmartContract') {
      const v = object(parameter['value'], 'value', ['owner_address', 'contract_address', 'call_value', 'data', 'call_token_value', 'token_id']);
      type = CONTRACT_TYPE.TriggerSmartContract;
      value = concat(
        bytesField(TRIGGER.owner, address(v['owner_address'], 'owner_address')),
        bytesField(TRIGGER.contract, address(v['contract_address'], 'contract_address')),
        varintField(TRIGGER.callValue, int(v['call_value'])),
        bytesField(TRIGGER.data, hex(v['data'])),
        varintField(TRIGGER.callTokenValue, int(v['call_token_value'])),
        varintField(6, int(v['token_id'])),
      );
    } else {
      throw new Error(`contract type ${String(c['type'])} is not one this service sends`);
    }
    const typeUrl = parameter['type_url'];
    if (typeof typeUrl !== 'string') throw new Error('parameter.type_url is not text');
    const any = concat(bytesField(ANY.typeUrl, new TextEncoder().encode(typeUrl)), bytesField(ANY.value, value));
    return bytesField(RAW.contract, concat(varintField(CONTRACT.type, BigInt(type)), bytesField(CONTRACT.parameter, any), varintField(5, int(c['Permission_id']))));
  });
  return concat(
    bytesField(1, hex(r['ref_block_bytes'])),
    varintField(3, int(r['ref_block_num'])),
    bytesField(4, hex(r['ref_block_hash'])),
    varintField(RAW.expiration, int(r['expiration'])),
    bytesField(10, hex(r['data'])),
    ...encoded,
    varintField(RAW.timestamp, int(r['timestamp'])),
    varintField(RAW.feeLimit, int(r['fee_limit'])),
  );
}

function object(value: unknown, what: string, known: string[]): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  const unknown = Object.keys(value).filter((k) => !known.includes(k));
  if (unknown.length) throw new Error(`${what} has fields this service does not write: ${unknown.join(', ')}`);
  return value as Record<string, unknown>;
}
const int = (value: unknown): bigint => {
  if (value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw new Error(`${JSON.stringify(value)} is not an unsigned integer`);
};
const hex = (value: unknown): Uint8Array => {
  if (value === undefined) return new Uint8Array(0);
  if (typeof value !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw new Error(`${JSON.stringify(value)} is not hex`);
  return Uint8Array.from(value.match(/../g) ?? [], (b) => parseInt(b, 16));
};
function varint(n: bigint): Uint8Array {
  const out: number[] = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) byte |= 0x80;
    out.push(byte);
  } while (n > 0n);
  return Uint8Array.from(out);
}
/** proto3: a zero or empty field is not written. */
const varintField = (field: number, value: bigint) => (value === 0n ? new Uint8Array(0) : concat(varint(BigInt(field << 3)), varint(value)));
const bytesField = (field: number, value: Uint8Array) => (value.length === 0 ? value : concat(varint(BigInt((field << 3) | 2)), varint(BigInt(value.length)), value));
function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
