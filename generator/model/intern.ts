import type { ApiModel, StorageResource, VersionModel, VersionResource } from "./types.ts";

/** A model as text for another thread (`ModelParts.revive`): its parts apart, each as its JSON text. */
export interface SentModel {
  /** The model's JSON with each part replaced by its index in `parts`. */
  skeleton: string;
  parts: string[];
}

type Skeleton = Omit<ApiModel, "versions" | "storage"> & {
  versions: Array<Omit<VersionModel, "resources"> & { resources: number[] }>;
  storage: number[];
};

/**
 * Keeps the model's parts the same objects from one generation to the next while they are equal
 * (`canon dev`, one process generating again and again): each resource of each version and each
 * storage resource is replaced by the object an earlier model had for the same JSON text. A save
 * that changes one resource then leaves every other part as it was, and an emitter can remember
 * what it built from a part by the object (a WeakMap) instead of comparing texts. Parts are never
 * modified after the model is built, so a shared object is as good as an equal one.
 */
export class ModelParts {
  /** The parts of the last model, by text (only the last model's: memory stays that of one model). */
  private known = new Map<string, object>();
  private next = new Map<string, object>();
  private texts = new WeakMap<object, string>();

  /** The model with its parts replaced by the remembered equal ones; remembers this model's parts. */
  intern(model: ApiModel): ApiModel {
    for (const version of model.versions) version.resources = version.resources.map((r) => this.part(JSON.stringify(r), () => r));
    model.storage = model.storage.map((s) => this.part(JSON.stringify(s), () => s));
    return this.done(model);
  }

  /** The model as text for another thread, its parts as the texts `intern` found for them. */
  send(model: ApiModel): SentModel {
    const parts: string[] = [];
    const index = (part: object) => parts.push(this.texts.get(part) ?? JSON.stringify(part)) - 1;
    const skeleton: Skeleton = {
      ...model,
      versions: model.versions.map((v) => ({ ...v, resources: v.resources.map(index) })),
      storage: model.storage.map(index),
    };
    return { skeleton: JSON.stringify(skeleton), parts };
  }

  /** A model that `send` wrote on another thread, interned here: a part seen before is not parsed again. */
  revive(sent: SentModel): ApiModel {
    const skeleton = JSON.parse(sent.skeleton) as Skeleton;
    const part = <T>(i: number): T => this.part(sent.parts[i]!, () => JSON.parse(sent.parts[i]!) as object) as T;
    return this.done({
      ...skeleton,
      versions: skeleton.versions.map((v) => ({ ...v, resources: v.resources.map((i) => part<VersionResource>(i)) })),
      storage: skeleton.storage.map((i) => part<StorageResource>(i)),
    });
  }

  /** The remembered part of this text, or else the one `make` gives, remembered for the next model. */
  private part<T extends object>(text: string, make: () => T): T {
    let kept = this.next.get(text) ?? this.known.get(text);
    if (!kept) this.texts.set((kept = make()), text);
    this.next.set(text, kept);
    return kept as T;
  }

  private done(model: ApiModel): ApiModel {
    this.known = this.next;
    this.next = new Map();
    return model;
  }
}
