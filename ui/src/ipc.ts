// Typed calls into the Rust side. The command functions, their argument and result types and
// the event names are generated from the Rust code (`commands.ts`, `bindings.ts`); this file
// only supplies the transport: Tauri's invoke, with every failure turned into a CommandError
// carrying the backend's ApiError (code, message, details, suggestion, PKCS#11 function and
// code).
import { invoke, type InvokeArgs } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { ApiError, ConsoleEvent } from "./bindings";
import { commandFunctions, type CommandName, type Commands, type EventName, type Events } from "./commands";

export class CommandError extends Error {
  readonly api: ApiError;
  constructor(api: ApiError) {
    super(api.message);
    this.api = api;
  }
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof CommandError) return e.api;
  if (e && typeof e === "object" && "code" in e && "message" in e) return e as ApiError;
  return { code: "INTERNAL", message: String(e), details: null, suggestion: null, pkcs11: null };
}

async function call<K extends CommandName>(command: K, args: Commands[K]["args"]): Promise<Commands[K]["result"]> {
  try {
    return await invoke<Commands[K]["result"]>(command, args as InvokeArgs);
  } catch (e) {
    throw new CommandError(toApiError(e));
  }
}

/** Every command of the backend, as a typed function. */
export const api = commandFunctions(call);

/** Listen for one of the backend's events. */
export function onEvent<K extends EventName>(name: K, cb: (payload: Events[K]) => void): Promise<UnlistenFn> {
  return listen<Events[K]>(name, (ev) => cb(ev.payload));
}

export function onConsoleEvent(cb: (e: ConsoleEvent) => void): Promise<UnlistenFn> {
  return onEvent("console-event", cb);
}

export function newJobId(): string {
  return `job-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
