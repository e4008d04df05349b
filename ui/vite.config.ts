import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The UI is served from the app bundle: no remote content, relative asset paths.
export default defineConfig({
  plugins: [react()],
  base: "./",
  clearScreen: false,
  // The catalogs live in ../locales (the backend reads them too).
  server: { port: 5173, strictPort: true, fs: { allow: [".."] } },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, sourcemap: false },
});
