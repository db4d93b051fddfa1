// The part of the WebAssembly JavaScript API the synthesizer uses. Node has it as a global, but
// its type declarations live in TypeScript's DOM library, which this server does not load.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer);
    static imports(module: Module): { module: string; name: string; kind: string }[];
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, ModuleImports>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
  type ModuleImports = Record<string, unknown>;
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
}
