// MCP tool input schemas, generated from the same zod schemas that validate REST bodies.
import { z } from 'zod';

/** A JSON Schema object (draft 2020-12), as MCP's `inputSchema` carries it. */
export type JsonSchema = { [key: string]: unknown };
type ObjectSchema = JsonSchema & { type: 'object'; properties: Record<string, JsonSchema>; required?: string[] };

/** How long a create tool waits for its job: `wait_seconds` (default 60, at most 300). */
export const WAIT_SECONDS = { default: 60, max: 300 } as const;

export const WaitSecondsSchema = z.object({
  wait_seconds: z
    .number({ error: `must be an integer from 0 to ${WAIT_SECONDS.max}` })
    .int(`must be an integer from 0 to ${WAIT_SECONDS.max}`)
    .min(0, 'must not be negative')
    .max(WAIT_SECONDS.max, `must be at most ${WAIT_SECONDS.max}`)
    .default(WAIT_SECONDS.default)
    .meta({
      description: `Seconds to wait for the job to end (default ${WAIT_SECONDS.default}, at most ${WAIT_SECONDS.max}); progress is reported meanwhile. 0 returns the job_id at once; follow it with get_job.`,
    }),
});

/**
 * The JSON Schema of a tool's arguments: the zod schema's input side with every `$ref` inlined (MCP
 * wants `type: object` at the root), OpenAPI's `example` spelled as JSON Schema's `examples`, and a
 * union of object variants (preview types) merged into one object, since clients such as Claude
 * refuse a top-level oneOf. The zod schema still validates every call, so nothing is lost.
 */
export function toolInputSchema(schema: z.ZodType, extra?: z.ZodObject): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as JsonSchema;
  const root = standardise(inlineRefs(json, (json.$defs ?? {}) as Record<string, JsonSchema>)) as JsonSchema;
  delete root.$defs;
  const variants = (root.oneOf ?? root.anyOf) as ObjectSchema[] | undefined;
  const object = variants ? mergeVariants(variants) : (root as ObjectSchema);
  if (extra) Object.assign(object.properties, (toolInputSchema(extra) as ObjectSchema).properties);
  return { $schema: root.$schema, ...object };
}

/**
 * The JSON Schema of what a tool returns as `structuredContent` (MCP's `outputSchema`): the output
 * side of the REST response schema, refs inlined, so clients can check a result as they read it.
 */
export function toolOutputSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  const root = openObjects(standardise(inlineRefs(json, (json.$defs ?? {}) as Record<string, JsonSchema>))) as JsonSchema;
  delete root.$defs;
  if (root.type !== 'object') throw new Error('an MCP outputSchema must describe an object');
  return root;
}

/** Results may gain fields in later releases: a client checking a result must not fail on one. */
function openObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openObjects);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node as JsonSchema).filter(([k, v]) => !(k === 'additionalProperties' && v === false)).map(([k, v]) => [k, openObjects(v)]));
}

function inlineRefs(node: unknown, defs: Record<string, JsonSchema>): unknown {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(n, defs));
  if (!node || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as JsonSchema;
  const target = typeof $ref === 'string' ? defs[$ref.replace('#/$defs/', '')] : undefined;
  const merged = target ? { ...target, ...rest } : rest;
  return Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, k === '$defs' ? v : inlineRefs(v, defs)]));
}

/**
 * For strict JSON Schema validators: `example` (OpenAPI's keyword, from `.meta`) becomes `examples`, `x-` extensions are dropped,
 * and an anyOf of constants (a union of literals, e.g. hash_size 8 | 16 | 32) becomes an enum.
 */
function standardise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(standardise);
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node as JsonSchema)) {
    // OpenAPI's extensions (x-enum-varnames) are unknown keywords to a strict JSON Schema validator
    if (k.startsWith('x-')) continue;
    if (k === 'example') out.examples = [v];
    else out[k] = standardise(v);
  }
  const members = out.anyOf as JsonSchema[] | undefined;
  // a nullable field (anyOf [its type, null]) keeps its description where clients look: on the field
  const described = members?.find((m) => typeof m.description === 'string');
  if (described && out.description === undefined) out.description = described.description;
  if (members?.every((m) => 'const' in m && Object.keys(m).every((k) => k === 'const' || k === 'type'))) {
    delete out.anyOf;
    out.type ??= members[0]?.type;
    out.enum = members.map((m) => m.const);
  }
  return out;
}

/**
 * One object from a discriminated union of strict objects: the discriminator becomes an enum, a
 * property every variant types the same way keeps its schema, one typed differently per variant
 * becomes an anyOf of those, each saying which variant it belongs to.
 */
function mergeVariants(variants: ObjectSchema[]): ObjectSchema {
  const keys = [...new Set(variants.flatMap((v) => Object.keys(v.properties)))];
  const tagKey = keys.find((k) => variants.every((v) => v.properties[k]?.const !== undefined));
  if (!tagKey) throw new Error('a union tool schema needs a discriminator property');
  const tagOf = (v: ObjectSchema) => String(v.properties[tagKey]!.const);
  const properties: Record<string, JsonSchema> = {};
  for (const key of keys) {
    if (key === tagKey) {
      const { description } = variants[0]!.properties[key]!;
      properties[key] = { type: 'string', enum: variants.map(tagOf), ...(description ? { description } : {}) };
      continue;
    }
    // A property a variant only tolerates (no type: "ignored here") does not shape the merged schema.
    const users = variants.filter((v) => Object.keys(v.properties[key] ?? {}).some((k) => k !== 'description'));
    const groups = new Map<string, { schema: JsonSchema; tags: string[] }>();
    for (const v of users) {
      const schema = v.properties[key]!;
      const id = JSON.stringify(schema);
      if (groups.has(id)) groups.get(id)!.tags.push(tagOf(v));
      else groups.set(id, { schema, tags: [tagOf(v)] });
    }
    const forTags = (g: { schema: JsonSchema; tags: string[] }) =>
      users.length === variants.length && groups.size === 1
        ? g.schema
        : { ...g.schema, description: [g.schema.description, `(only for ${tagKey} ${g.tags.join(' or ')})`].filter(Boolean).join(' ') };
    const merged = [...groups.values()].map(forTags);
    properties[key] = merged.length === 1 ? merged[0]! : { description: `Depends on ${tagKey}`, anyOf: merged };
  }
  const required = variants.map((v) => v.required ?? []).reduce((a, b) => a.filter((k) => b.includes(k)));
  return { type: 'object', properties, required, additionalProperties: false };
}
