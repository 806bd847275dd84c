import type { Engine } from "../engine.ts";
import type { ApiModel, StorageResource, VersionModel, VersionResource } from "./types.ts";

/** A model as text for another thread (`ModelParts.revive`): its parts apart, each as its JSON text. */
export interface SentModel {
  /** The model's JSON with each part replaced by its index in `parts`. */
  skeleton: string;
  parts: Array<{ slot: string; text: string }>;
}

type Skeleton = Omit<ApiModel, "versions" | "storage"> & {
  versions: Array<Omit<VersionModel, "resources"> & { resources: number[] }>;
  storage: number[];
};

/**
 * Keeps the model's parts the same objects from one generation to the next while they are equal
 * (`canon dev`, one process generating again and again): each resource of each version and each
 * storage resource is replaced by the object the last model had in its place (the same version
 * and collection) when the two are equal as JSON. A save that changes one resource then leaves
 * every other part as it was, and an emitter can remember what it built from a part by the
 * object instead of comparing texts, and the engine (engine.ts) is told each part's JSON text,
 * which it keys units by. Parts are never modified after the model is built, so a shared object
 * is as good as an equal one; interning builds a new model around them and modifies nothing.
 */
export class ModelParts {
  private readonly engine: Engine | null;
  constructor(engine: Engine | null = null) {
    this.engine = engine;
  }

  /** The parts of the last model, by their place (only the last model's: memory stays that of one model). */
  private known = new Map<string, { text: string; part: object }>();
  private next = new Map<string, { text: string; part: object }>();
  private texts = new WeakMap<object, string>();

  /** A model like `model` with its parts replaced by the remembered equal ones; remembers this model's parts. */
  intern(model: ApiModel): ApiModel {
    return this.done({
      ...model,
      versions: model.versions.map((version) => ({
        ...version,
        resources: version.resources.map((r) => this.part(slotOf(version.name, r.collection), JSON.stringify(r), () => r)),
      })),
      storage: model.storage.map((s) => this.part(slotOf(null, s.collection), JSON.stringify(s), () => s)),
    });
  }

  /** The model as text for another thread, its parts as the texts `intern` found for them. */
  send(model: ApiModel): SentModel {
    const parts: SentModel["parts"] = [];
    const index = (slot: string, part: object) => parts.push({ slot, text: this.texts.get(part) ?? JSON.stringify(part) }) - 1;
    const skeleton: Skeleton = {
      ...model,
      versions: model.versions.map((v) => ({ ...v, resources: v.resources.map((r) => index(slotOf(v.name, r.collection), r)) })),
      storage: model.storage.map((s) => index(slotOf(null, s.collection), s)),
    };
    return { skeleton: JSON.stringify(skeleton), parts };
  }

  /** A model that `send` wrote on another thread, interned here: a part equal to the one in its place last time is not parsed again. */
  revive(sent: SentModel): ApiModel {
    const skeleton = JSON.parse(sent.skeleton) as Skeleton;
    const part = <T>(i: number): T => {
      const { slot, text } = sent.parts[i]!;
      return this.part(slot, text, () => JSON.parse(text) as object) as T;
    };
    return this.done({
      ...skeleton,
      versions: skeleton.versions.map((v) => ({ ...v, resources: v.resources.map((i) => part<VersionResource>(i)) })),
      storage: skeleton.storage.map((i) => part<StorageResource>(i)),
    });
  }

  /** The last model's part in this place when its text is `text`, or else the one `make` gives. */
  private part<T extends object>(slot: string, text: string, make: () => T): T {
    const last = this.known.get(slot);
    // Comparing the two texts costs no hashing of either.
    const part = last?.text === text ? last.part : make();
    this.texts.set(part, text);
    this.engine?.knowText(part, text);
    this.next.set(slot, { text, part });
    return part as T;
  }

  private done(model: ApiModel): ApiModel {
    this.known = this.next;
    this.next = new Map();
    return model;
  }
}

/** A part's place in the model: a version's resource, or (version null) a storage resource. */
function slotOf(version: string | null, collection: string): string {
  return version === null ? `storage ${collection}` : `${version} ${collection}`;
}
