/**
 * Loads docker/k8s and checks manifests the way the API server would: against the Kubernetes
 * OpenAPI schemas (kubernetes-models) and, for unknown fields, against the generated types.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { K8S_DIR } from './deploy-files';

// ---------------------------------------------------------------------------
// Kubernetes schema validation
// ---------------------------------------------------------------------------

export interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: string };
  [field: string]: unknown;
}

export interface LoadedManifest {
  file: string;
  doc: Manifest;
}

type ModelClass = new (data: never) => { validate(): void };

// Every kind the manifests may use. A kind missing here fails validation instead of being skipped.
const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

export const KUSTOMIZATION_KIND = 'kustomize.config.k8s.io/v1beta1/Kustomization';

export function kindKey(doc: Manifest): string {
  return `${String(doc.apiVersion)}/${String(doc.kind)}`;
}

function loadYamlDocuments(file: string): Manifest[] {
  const text = fs.readFileSync(file, 'utf8');
  return parseAllDocuments(text).flatMap((document): Manifest[] => {
    const problems = [...document.errors, ...document.warnings];
    if (problems.length > 0) {
      throw new Error(`${file}: ${problems.map((p) => p.message).join('; ')}`);
    }
    const value: unknown = document.toJS();
    // A trailing `---` yields an empty document, which kubectl ignores too.
    return value === null || value === undefined ? [] : [value as Manifest];
  });
}

export function loadK8sManifests(): LoadedManifest[] {
  return fs
    .readdirSync(K8S_DIR)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .flatMap((file) => loadYamlDocuments(path.join(K8S_DIR, file)).map((doc) => ({ file, doc })));
}

// The upstream OpenAPI schema (checked by kubernetes-models' compiled ajv validators) catches
// wrong types, missing required fields and bad formats.
function schemaErrors(doc: Manifest): string[] {
  const Model = MODELS[kindKey(doc)];
  if (!Model) {
    return [`no schema known for apiVersion/kind ${kindKey(doc)}`];
  }
  try {
    new Model(doc as never).validate();
    return [];
  } catch (error) {
    const details = (error as { errors?: { instancePath: string; message?: string }[] }).errors;
    return details
      ? details.map((e) => `schema: ${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
      : [`schema: ${(error as Error).message}`];
  }
}

// The upstream schema allows unknown fields, but the API server rejects them (kubectl
// --validate=strict, the default). A typo such as `readinesProbe` would otherwise pass silently,
// so each manifest is also type-checked, as an object literal, against the interfaces generated
// from the same OpenAPI document: TypeScript's excess-property check reports unknown fields at
// any depth.
function unknownFieldErrors(docs: Manifest[]): string[][] {
  const fileName = path.join(__dirname, '..', '__k8s_manifests__.ts');
  const lines: string[] = [];
  const owners: number[] = [];
  const push = (text: string, owner: number): void => {
    for (const line of text.split('\n')) {
      lines.push(line);
      owners.push(owner);
    }
  };
  docs.forEach((doc, index) => {
    if (MODELS[kindKey(doc)]) {
      const typesModule = `kubernetes-models/${String(doc.apiVersion)}/${String(doc.kind)}`;
      push(`import type { I${String(doc.kind)} as T${index} } from '${typesModule}';`, -1);
    }
  });
  docs.forEach((doc, index) => {
    if (MODELS[kindKey(doc)]) {
      push(`export const m${index}: T${index} = ${JSON.stringify(doc, null, 2)};`, index);
    }
  });
  const source = lines.join('\n');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, languageVersion, true)
      : getSourceFile(name, languageVersion, ...rest);
  host.fileExists = (name) => name === fileName || fileExists(name);
  host.readFile = (name) => (name === fileName ? source : readFile(name));

  const program = ts.createProgram([fileName], options, host);
  const result: string[][] = docs.map(() => []);
  for (const diagnostic of ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName))) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const line =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line
        : -1;
    const owner = line >= 0 ? owners[line] : -1;
    if (owner < 0) {
      // The check itself is broken (for example the package layout changed): fail loudly.
      throw new Error(`manifest type check could not run: ${message}`);
    }
    result[owner].push(`fields: ${message} (at ${lines[line].trim()})`);
  }
  return result;
}

export function validateManifests(docs: Manifest[]): string[][] {
  const unknownFields = unknownFieldErrors(docs);
  return docs.map((doc, index) => [...schemaErrors(doc), ...unknownFields[index]]);
}
