// Reload an HA view when the backend says a group changed, and every statistics interval.
import { useEffect } from "react";
import { useSettings } from "../../state";
import { useConsoleEvent } from "../../state/events";

/// Reload when the backend says a group changed, and every statistics interval.
export function useHaRefresh(reload: () => void, poll: boolean) {
  const { settings } = useSettings();
  const every = (settings?.stats_poll_seconds ?? 5) * 1000;
  useConsoleEvent((e) => {
    if (e.kind === "ha_changed") reload();
  });
  useEffect(() => {
    if (!poll) return;
    const t = setInterval(() => {
      if (!document.hidden) reload();
    }, every);
    return () => clearInterval(t);
  }, [reload, poll, every]);
}
