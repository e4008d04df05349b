import { defineConfig } from "vite";

// The mock backend for browser tests, as one script injected before the app's own.
export default defineConfig({
  build: {
    target: "es2022",
    outDir: "dist-mock",
    emptyOutDir: true,
    lib: { entry: "tests/mock/backend.ts", formats: ["iife"], name: "HsmcMock", fileName: () => "mock.js" },
  },
});
