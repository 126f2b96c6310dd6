// @trust-gate/sdk/spl: the token pieces of a settlement (both token programs).

export { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, mint, type TokenProgramId } from './chain.js';
export { transferChecked } from './instructions.js';
export { associatedTokenAccount } from './settle.js';
