/**
 * The guest desktop driver (ARCHITECTURE.md "Browser control"; reference subsystems.md §3):
 * `runGuestServe` is what `humanish guest serve` calls inside the guest container.
 */
export { runGuestServe, type GuestServeOptions } from "./serve.ts";
export { runGuestCaptureBench } from "./capture-bench.ts";
export { GUEST_IO_DIR, GUEST_LISTENING_MARKER, guestConfigSchema, parseGuestConfig, type GuestConfig } from "./config.ts";
export { bootDesktop, inspectRendererSandbox, CHROMIUM_BINARY, type GuestDesktop, type SandboxProof, type DesktopBootOptions } from "./desktop.ts";
export { createGuestExecutor, planAction, MAX_WHEEL_STEPS, WHEEL_STEP_PX, type GuestExecutor, type NativeStep } from "./executor.ts";
export { xdotoolChord, keysymFor } from "./keys.ts";
export { startForwarder, type Forwarder } from "./forward.ts";
export { decodeXwd, encodePng, perceptualSignature, type RgbaFrame } from "./frame.ts";
