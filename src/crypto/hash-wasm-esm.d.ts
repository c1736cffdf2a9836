// hash-wasm's ES module build (src/crypto/hash.ts imports it by path): the package's own types,
// which describe that build as much as its default (UMD) one.
declare module "hash-wasm/dist/index.esm.js" {
  export * from "hash-wasm";
}
