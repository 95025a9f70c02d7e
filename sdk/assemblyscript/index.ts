// The package entry: `import { ... } from "@skillbox/sdk"` resolves here.
export * from "./assembly/index";
