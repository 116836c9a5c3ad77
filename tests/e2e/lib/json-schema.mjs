// A validator for the subset of JSON Schema (draft 2020-12) that docs/metadata.schema.json uses: type,
// properties, required, items, enum, const, minimum, minItems, maxItems, minLength, anyOf, and $ref to
// "#/$defs/NAME". A keyword outside the subset throws, so the schema cannot silently use one this file
// ignores. Debian has no JSON Schema validator for C++ or Node.js; the schema is checked against this and
// against hand-written documents in schema.test.mjs.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', '$defs', '$comment']);
const KEYWORDS = new Set(['type', 'properties', 'required', 'items', 'enum', 'const', 'minimum', 'minItems', 'maxItems',
  'minLength', 'anyOf', '$ref']);

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer'
  : typeof v === 'number' ? 'number' : typeof v);
const hasType = (v, t) => typeOf(v) === t || (t === 'number' && typeOf(v) === 'integer');
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The problems of `value` against `schema` ("$.states[0].dtype: not one of ..."); [] when it is valid.
 * @param {object} schema  the root schema (its $defs resolve $ref)
 * @param {unknown} value
 */
export function validate(schema, value) {
  const problems = [];
  check(schema, schema, value, '$', problems);
  return problems;
}

function check(root, schema, value, at, problems) {
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) throw new Error(`json-schema.mjs: keyword '${key}' at ${at} is not supported`);
  }
  if (schema.$ref !== undefined) {
    const match = /^#\/\$defs\/(.+)$/.exec(schema.$ref);
    if (!match || !root.$defs?.[match[1]]) throw new Error(`json-schema.mjs: cannot resolve $ref '${schema.$ref}'`);
    check(root, root.$defs[match[1]], value, at, problems);
  }
  if (schema.type !== undefined) {
    const types = [schema.type].flat();
    if (!types.some((t) => hasType(value, t))) {
      problems.push(`${at}: ${JSON.stringify(value)} is not ${types.join(' or ')}`);
      return;
    }
  }
  if (schema.const !== undefined && !same(value, schema.const)) problems.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.some((e) => same(e, value))) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (schema.minimum !== undefined && typeof value === 'number' && value < schema.minimum) problems.push(`${at}: ${value} < ${schema.minimum}`);
  if (schema.minLength !== undefined && typeof value === 'string' && value.length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength}`);
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) problems.push(`${at}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${at}: more than ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => check(root, schema.items, item, `${at}[${i}]`, problems));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of schema.required ?? []) if (!(key in value)) problems.push(`${at}: no "${key}"`);
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (key in value) check(root, sub, value[key], `${at}.${key}`, problems);
    }
  }
  const matches = (sub) => {
    const found = [];
    check(root, sub, value, at, found);
    return found.length === 0;
  };
  if (schema.anyOf && !schema.anyOf.some(matches)) {
    problems.push(`${at}: ${JSON.stringify(value)} matches none of its forms`);
  }
}

const SCHEMA_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'metadata.schema.json');
let metadataSchema = null;

/** The problems of an `rnnstate` metadata document (parsed) against docs/metadata.schema.json. */
export function metadataProblems(document) {
  metadataSchema ??= JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'));
  return validate(metadataSchema, document);
}
