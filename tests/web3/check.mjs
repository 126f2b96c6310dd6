// Reads an account, gets a blockhash, simulates and sends a transfer against RPC_URL with
// @solana/web3.js, then prints one JSON line with what it saw. Exits non-zero on any failure.
import {
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
} from "@solana/web3.js";

const rpcUrl = process.env.RPC_URL;
const secret = process.env.PAYER_SECRET;
const readAccount = process.env.READ_ACCOUNT;
if (!rpcUrl || !secret || !readAccount) {
  console.error("set RPC_URL, PAYER_SECRET (base58 64-byte secret key) and READ_ACCOUNT");
  process.exit(2);
}

// base58 decoding without another dependency.
function base58(s) {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = 0n;
  for (const c of s) {
    const i = alphabet.indexOf(c);
    if (i < 0) throw new Error(`not base58: ${c}`);
    n = n * 58n + BigInt(i);
  }
  const bytes = [];
  while (n > 0n) {
    bytes.unshift(Number(n % 256n));
    n /= 256n;
  }
  for (const c of s) {
    if (c !== "1") break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

const connection = new Connection(rpcUrl, "confirmed");
const payer = Keypair.fromSecretKey(base58(secret));

const info = await connection.getAccountInfo(new PublicKey(readAccount));
if (!info) throw new Error(`account ${readAccount} not found`);

const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
const recipient = Keypair.generate().publicKey;
const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
  SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_234_567 }),
);
const simulation = await connection.simulateTransaction(tx, [payer]);
if (simulation.value.err) throw new Error(`simulation failed: ${JSON.stringify(simulation.value)}`);
// The localnet serves HTTP JSON-RPC only (no pubsub websocket), so confirm by polling.
tx.sign(payer);
const signature = await connection.sendRawTransaction(tx.serialize());
let status = null;
for (let i = 0; i < 50 && !status; i++) {
  status = (await connection.getSignatureStatuses([signature])).value[0];
  if (!status) await new Promise((r) => setTimeout(r, 100));
}
if (!status || status.err) throw new Error(`not confirmed: ${JSON.stringify(status)}`);
const balance = await connection.getBalance(recipient);
if (balance !== 1_234_567) throw new Error(`recipient holds ${balance}`);

console.log(
  JSON.stringify({
    account: { owner: info.owner.toBase58(), lamports: info.lamports, bytes: info.data.length },
    blockhash,
    simulation: { err: simulation.value.err, logs: simulation.value.logs.length },
    signature,
    recipient: recipient.toBase58(),
  }),
);
