// Just enough of WASI preview 1 to run a command-line program compiled to WebAssembly in-process:
// its arguments, a clock, and files it opens for writing kept in memory. Node's own node:wasi is
// still experimental on Node 20 (it prints a warning into every server log) and writes to disk.
// The program gets no file system, no environment and no network: what it writes is all it does.

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_NOSYS = 52;
const FILETYPE_CHARACTER_DEVICE = 2;
const FILETYPE_DIRECTORY = 3;
const FILETYPE_REGULAR_FILE = 4;
/** The one directory the program sees, at fd 3, under this name. */
const PREOPEN_FD = 3;
const PREOPEN_NAME = '/out';

class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A file the program wrote, grown as it writes and seeks. */
class MemoryFile {
  bytes = new Uint8Array(64 * 1024);
  length = 0;
  position = 0;

  write(chunk: Uint8Array): void {
    const end = this.position + chunk.length;
    if (end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(end, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    this.bytes.set(chunk, this.position);
    this.position = end;
    this.length = Math.max(this.length, end);
  }
}

export interface CommandRun {
  exitCode: number;
  /** Files by the path the program opened, under /out. */
  files: Map<string, Buffer>;
  stderr: string;
}

/** Runs `module`'s `_start` with `args` (args[0] is the program's name). Synchronous. */
export function runWasiCommand(module: WebAssembly.Module, args: readonly string[]): CommandRun {
  // Set once the instance exists; read on every call, since the memory may grow meanwhile.
  const state: { memory?: WebAssembly.Memory } = {};
  const view = () => new DataView(state.memory!.buffer);
  const bytes = () => new Uint8Array(state.memory!.buffer);
  const encoded = args.map((arg) => Buffer.from(`${arg}\0`));
  const files = new Map<number, { path: string; file: MemoryFile }>();
  let nextFd = PREOPEN_FD + 1;
  let stderr = '';

  const gather = (iovs: number, count: number): Uint8Array[] => {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const pointer = view().getUint32(iovs + i * 8, true);
      const length = view().getUint32(iovs + i * 8 + 4, true);
      parts.push(bytes().slice(pointer, pointer + length));
    }
    return parts;
  };

  const imports = {
    args_sizes_get(countPtr: number, sizePtr: number) {
      view().setUint32(countPtr, encoded.length, true);
      view().setUint32(
        sizePtr,
        encoded.reduce((sum, arg) => sum + arg.length, 0),
        true,
      );
      return ERRNO_SUCCESS;
    },
    args_get(argvPtr: number, bufferPtr: number) {
      let at = bufferPtr;
      encoded.forEach((arg, i) => {
        view().setUint32(argvPtr + i * 4, at, true);
        bytes().set(arg, at);
        at += arg.length;
      });
      return ERRNO_SUCCESS;
    },
    clock_time_get(_id: number, _precision: bigint, timePtr: number) {
      view().setBigUint64(timePtr, process.hrtime.bigint(), true);
      return ERRNO_SUCCESS;
    },
    fd_close(fd: number) {
      return files.has(fd) || fd <= PREOPEN_FD ? ERRNO_SUCCESS : ERRNO_BADF;
    },
    fd_fdstat_get(fd: number, statPtr: number) {
      const type =
        fd <= 2 ? FILETYPE_CHARACTER_DEVICE : fd === PREOPEN_FD ? FILETYPE_DIRECTORY : FILETYPE_REGULAR_FILE;
      if (fd > PREOPEN_FD && !files.has(fd)) return ERRNO_BADF;
      view().setUint8(statPtr, type);
      view().setUint16(statPtr + 2, 0, true);
      view().setBigUint64(statPtr + 8, 0xffffffffffffffffn, true);
      view().setBigUint64(statPtr + 16, 0xffffffffffffffffn, true);
      return ERRNO_SUCCESS;
    },
    fd_fdstat_set_flags() {
      return ERRNO_SUCCESS;
    },
    fd_prestat_get(fd: number, prestatPtr: number) {
      if (fd !== PREOPEN_FD) return ERRNO_BADF;
      view().setUint8(prestatPtr, 0);
      view().setUint32(prestatPtr + 4, PREOPEN_NAME.length, true);
      return ERRNO_SUCCESS;
    },
    fd_prestat_dir_name(fd: number, pathPtr: number, length: number) {
      if (fd !== PREOPEN_FD) return ERRNO_BADF;
      bytes().set(Buffer.from(PREOPEN_NAME).subarray(0, length), pathPtr);
      return ERRNO_SUCCESS;
    },
    fd_read(_fd: number, _iovs: number, _count: number, readPtr: number) {
      view().setUint32(readPtr, 0, true);
      return ERRNO_SUCCESS;
    },
    fd_seek(fd: number, offset: bigint, whence: number, positionPtr: number) {
      const open = files.get(fd);
      if (!open) return ERRNO_BADF;
      const base = whence === 0 ? 0 : whence === 1 ? open.file.position : open.file.length;
      open.file.position = Math.max(0, base + Number(offset));
      view().setBigUint64(positionPtr, BigInt(open.file.position), true);
      return ERRNO_SUCCESS;
    },
    fd_write(fd: number, iovs: number, count: number, writtenPtr: number) {
      const parts = gather(iovs, count);
      const total = parts.reduce((sum, part) => sum + part.length, 0);
      const open = files.get(fd);
      if (open) for (const part of parts) open.file.write(part);
      else if (fd === 2) stderr += Buffer.concat(parts).toString('utf8').slice(0, 4096);
      else if (fd !== 1) return ERRNO_BADF;
      view().setUint32(writtenPtr, total, true);
      return ERRNO_SUCCESS;
    },
    path_open(
      dirFd: number,
      _dirFlags: number,
      pathPtr: number,
      pathLength: number,
      _openFlags: number,
      _rightsBase: bigint,
      _rightsInheriting: bigint,
      _fdFlags: number,
      fdPtr: number,
    ) {
      if (dirFd !== PREOPEN_FD) return ERRNO_BADF;
      const path = Buffer.from(bytes().slice(pathPtr, pathPtr + pathLength)).toString('utf8');
      const fd = nextFd++;
      files.set(fd, { path, file: new MemoryFile() });
      view().setUint32(fdPtr, fd, true);
      return ERRNO_SUCCESS;
    },
    proc_exit(code: number): never {
      throw new ProcExit(code);
    },
  };
  const known = new Set(Object.keys(imports));
  const wasi: Record<string, unknown> = { ...imports };
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    if (from === 'wasi_snapshot_preview1' && !known.has(name)) wasi[name] = () => ERRNO_NOSYS;
  }
  const instance = new WebAssembly.Instance(module, {
    wasi_snapshot_preview1: wasi as WebAssembly.ModuleImports,
  });
  state.memory = instance.exports.memory as WebAssembly.Memory;
  let exitCode = 0;
  try {
    (instance.exports._start as () => void)();
  } catch (err) {
    if (!(err instanceof ProcExit)) throw err;
    exitCode = err.code;
  }
  const written = new Map<string, Buffer>();
  for (const { path, file } of files.values()) {
    written.set(path, Buffer.from(file.bytes.subarray(0, file.length)));
  }
  return { exitCode, files: written, stderr };
}
