// The backend's events (partition changes, audit records), subscribed to for as long as the
// calling component is mounted. The handler may change on every render; the subscription
// stays and always calls the latest one.
import { useEffect, useEffectEvent } from "react";
import type { ConsoleEvent } from "../bindings";
import { onConsoleEvent } from "../ipc";

export function useConsoleEvent(handler: (e: ConsoleEvent) => void) {
  const onEvent = useEffectEvent(handler);
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let gone = false;
    void onConsoleEvent((e) => onEvent(e)).then((u) => {
      if (gone) u();
      else unlisten = u;
    });
    return () => {
      gone = true;
      unlisten?.();
    };
  }, []);
}
