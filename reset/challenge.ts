/**
 * The consent token of a reset: an HMAC-SHA256, under a key made for this
 * boot and kept only in memory, over what the operator was shown: the node,
 * its boot id, the sorted GUIDs of the partitions that would be wiped, and an
 * expiry. A token from another boot fails its MAC (a new key) as well as its
 * boot id; an expired one, or one for another set of partitions, is refused.
 * The expiry is checked on the monotonic clock (the key lives no longer than
 * the boot, so a monotonic time is meaningful); the wall-clock expiry is only
 * shown. The MAC is checked by WebCrypto's `verify`, in constant time.
 * @module
 */

/** What a challenge binds. */
export interface ChallengeClaims {
  readonly node: string;
  readonly bootId: string;
  /** Sorted, lower-case unique partition GUIDs. */
  readonly partitions: readonly string[];
}

/** Why a challenge was refused. */
export type ChallengeRefusal =
  | "malformed"
  | "signature"
  | "boot"
  | "node"
  | "partitions"
  | "expired";

/** A challenge that does not hold for the node as it is now. */
export class ChallengeError extends Error {
  override name = "ChallengeError";
  constructor(readonly reason: ChallengeRefusal, message: string) {
    super(message);
  }
}

interface Payload extends ChallengeClaims {
  /** Monotonic ms (this boot) after which it is refused. */
  readonly expMono: number;
  /** Wall-clock epoch ms of the same instant, for display. */
  readonly expires: number;
}

const PREFIX = "mdr1";
const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

function unb64url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** Issues and checks reset challenges with one per-boot key. */
export class ResetChallenger {
  #key: Promise<CryptoKey>;
  constructor(
    readonly ttlMs = 5 * 60_000,
    readonly mono: () => number = () => performance.now(),
    readonly wall: () => number = Date.now,
  ) {
    this.#key = crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]) as Promise<CryptoKey>;
  }

  /** A challenge for `claims`, valid for {@link ttlMs}. */
  async issue(claims: ChallengeClaims): Promise<{ token: string; expires: number }> {
    const payload: Payload = {
      node: claims.node,
      bootId: claims.bootId,
      partitions: [...claims.partitions],
      expMono: this.mono() + this.ttlMs,
      expires: this.wall() + this.ttlMs,
    };
    const body = b64url(enc.encode(JSON.stringify(payload)));
    const mac = await crypto.subtle.sign("HMAC", await this.#key, enc.encode(`${PREFIX}.${body}`));
    return { token: `${PREFIX}.${body}.${b64url(new Uint8Array(mac))}`, expires: payload.expires };
  }

  /**
   * Checks `token` against the node as it is now.
   * @throws ChallengeError saying which binding does not hold.
   */
  async verify(token: string, now: ChallengeClaims): Promise<void> {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== PREFIX || token.length > 4096) {
      throw new ChallengeError("malformed", "The reset challenge is malformed");
    }
    let mac: Uint8Array<ArrayBuffer>;
    let payload: Payload;
    try {
      mac = unb64url(parts[2]);
      payload = JSON.parse(new TextDecoder().decode(unb64url(parts[1])));
    } catch {
      throw new ChallengeError("malformed", "The reset challenge is malformed");
    }
    const ok = await crypto.subtle.verify(
      "HMAC",
      await this.#key,
      mac,
      enc.encode(`${PREFIX}.${parts[1]}`),
    );
    if (!ok) {
      throw new ChallengeError(
        "signature",
        "The reset challenge was not issued during this boot of this node (ask for a new one)",
      );
    }
    if (payload.bootId !== now.bootId) {
      throw new ChallengeError(
        "boot",
        `The reset challenge is for boot ${payload.bootId}; the node runs boot ${now.bootId}`,
      );
    }
    if (payload.node !== now.node) {
      throw new ChallengeError(
        "node",
        `The reset challenge is for node "${payload.node}", not "${now.node}"`,
      );
    }
    if (payload.partitions.join(",") !== now.partitions.join(",")) {
      throw new ChallengeError(
        "partitions",
        `The reset challenge covers partitions [${payload.partitions.join(", ")}] but the node ` +
          `would now wipe [${now.partitions.join(", ")}] (ask for a new one)`,
      );
    }
    if (this.mono() >= payload.expMono) {
      throw new ChallengeError(
        "expired",
        `The reset challenge expired at ${new Date(payload.expires).toISOString()}`,
      );
    }
  }
}
