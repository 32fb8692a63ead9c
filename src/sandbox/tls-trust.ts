/**
 * The words for a sandbox that does not trust the TLS certificate it was shown — pure.
 *
 * Behind an HTTPS-intercepting proxy (corporate or CI egress), npm inside a sandbox fails with
 * `SELF_SIGNED_CERT_IN_CHAIN` or "unable to get local issuer certificate": the proxy's CA is
 * trusted on the host (often through `NODE_EXTRA_CA_CERTS`) but not in the sandbox. The next step
 * of such a failure names the knob that fixes it, rather than the network or the version.
 */

/** The operator knob naming the host PEM bundle copied into sandboxes. */
export const SANDBOX_CA_ENV = "HUMANISH_SANDBOX_CA_CERTS";
/** Node's own extra-CA variable: used for sandboxes too when {@link SANDBOX_CA_ENV} is unset. */
export const HOST_NODE_CA_ENV = "NODE_EXTRA_CA_CERTS";

/** OpenSSL/Node/npm spellings of "the chain ends in a CA this machine does not trust". */
const UNTRUSTED_CHAIN =
  /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|DEPTH_ZERO_SELF_SIGNED_CERT|unable to get (?:local )?issuer certificate|self[- ]signed certificate in certificate chain/i;

/**
 * The next step for a failed command whose output shows an untrusted certificate chain, or null
 * when it does not. `caCopied`: a CA bundle from the host was already copied into the sandbox.
 */
export function untrustedCertNext(output: string, caCopied: boolean): string | null {
  if (!UNTRUSTED_CHAIN.test(output)) return null;
  return !caCopied
    ? `The sandbox does not trust the TLS certificate it was shown (an HTTPS-intercepting proxy?). Set ${SANDBOX_CA_ENV} on the host to the proxy's CA bundle (a PEM file of certificates; ${HOST_NODE_CA_ENV} is used when it is unset) and run again: humanish copies it into each sandbox.`
    : `The sandbox does not trust the TLS certificate it was shown, although the host's CA bundle (${SANDBOX_CA_ENV}, else ${HOST_NODE_CA_ENV}) was copied into it: that bundle lacks the issuer. Point ${SANDBOX_CA_ENV} at a PEM file that includes the proxy's CA and run again.`;
}
