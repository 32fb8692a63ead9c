/**
 * The guest desktop driver (ARCHITECTURE.md "Browser control"):
 * `runGuestServe` is what `humanish guest serve` calls inside the guest container.
 */

export { type Forwarder, startForwarder } from "../forward/forward.ts";
export { type BareStep, parseBareSteps, runGuestBareBench } from "./bare-bench.ts";
export { runGuestCaptureBench } from "./capture-bench.ts";
export { bootDesktop, CHROMIUM_BINARY, type DesktopBootOptions, type GuestDesktop, inspectRendererSandbox, type SandboxProof } from "./desktop.ts";
export { createGuestExecutor, type GuestExecutor, MAX_WHEEL_STEPS, type NativeStep, planAction, WHEEL_STEP_PX } from "./executor.ts";
export { decodeXwd, encodePng, perceptualSignature, type RgbaFrame } from "./frame.ts";
export { GUEST_IO_DIR, GUEST_LISTENING_MARKER, type GuestConfig, guestConfigSchema, parseGuestConfig } from "./host-guest.ts";
export { keysymFor, xdotoolChord } from "./keys.ts";
export { type GuestServeOptions, runGuestServe } from "./serve.ts";
