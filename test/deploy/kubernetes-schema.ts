// Validation of rendered Kubernetes objects against the API schemas, with the kubernetes-models
// packages: each object's model class checks types, required fields, enums and patterns. Those
// schemas let unknown fields through, and a misspelt field is silently ignored by the API server's
// default (non-strict) decoding; so every field is also looked up in the package's declared types,
// with the TypeScript checker, and an unknown one is reported by its path.
import { join } from 'node:path';
import ts from 'typescript';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

const OPERATOR_GROUP = 'monitoring.coreos.com';

/** The module of the model class of `apiVersion` and `kind`, e.g. kubernetes-models/apps/v1/StatefulSet. */
export function modelModule(object: Pick<KubeObject, 'apiVersion' | 'kind'>): string {
  const [group, version] = object.apiVersion.includes('/')
    ? object.apiVersion.split('/')
    : ['', object.apiVersion];
  if (group === OPERATOR_GROUP)
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${object.kind}`;
  return group === ''
    ? `kubernetes-models/${version}/${object.kind}`
    : `kubernetes-models/${group}/${version}/${object.kind}`;
}

type ModelClass = new (data: unknown) => { validate(): void };

/** Schema problems of `object`, empty when it is valid. */
export async function schemaProblems(object: KubeObject): Promise<string[]> {
  const module = (await import(modelModule(object))) as Record<string, ModelClass>;
  const Model = module[object.kind];
  if (!Model) return [`no model for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

/** Looks up fields in the declared types of the models; built once, as it compiles their types. */
export function fieldChecker(root: string, objects: readonly KubeObject[]) {
  const kinds = [...new Map(objects.map((o) => [`${o.apiVersion}/${o.kind}`, o])).values()];
  const entry = join(root, 'test/deploy/__kube-fields__.ts');
  const source = kinds
    .map(
      (o, i) =>
        `import type { I${o.kind} as T${i} } from '${modelModule(o)}';\nexport declare const k${i}: T${i};`,
    )
    .join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    file === entry ? ts.createSourceFile(file, source, language) : getSourceFile(file, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === entry || fileExists(file);
  const program = ts.createProgram([entry], options, host);
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile(entry)!;
  const declared = new Map<string, ts.Type>();
  for (const statement of sourceFile.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      declared.set(declaration.name.getText(sourceFile), checker.getTypeAtLocation(declaration.name));
    }
  }
  const rootTypes = new Map<string, ts.Type>();
  for (const [i, o] of kinds.entries()) {
    const type = declared.get(`k${i}`);
    // An unresolved import would make every field pass: refuse it instead.
    if (!type || type.flags & ts.TypeFlags.Any)
      throw new Error(`no declared type for ${o.apiVersion} ${o.kind}`);
    rootTypes.set(`${o.apiVersion}/${o.kind}`, type);
  }

  function walk(value: unknown, type: ts.Type, path: string, unknown: string[]): void {
    type = checker.getNonNullableType(type);
    if (value === null || typeof value !== 'object') return;
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
    if (Array.isArray(value)) {
      const element = checker.isArrayType(type)
        ? checker.getTypeArguments(type as ts.TypeReference)[0]
        : undefined;
      if (element) value.forEach((item, i) => walk(item, element, `${path}[${i}]`, unknown));
      return;
    }
    const candidates = type.isUnion() ? type.types.filter((t) => t.flags & ts.TypeFlags.Object) : [type];
    const objectType = candidates[0];
    if (!objectType) return;
    const index = checker.getIndexInfoOfType(objectType, ts.IndexKind.String);
    for (const [key, child] of Object.entries(value)) {
      const property = objectType.getProperty(key);
      if (property) walk(child, checker.getTypeOfSymbol(property), `${path}.${key}`, unknown);
      else if (index) walk(child, index.type, `${path}.${key}`, unknown);
      else unknown.push(`${path}.${key}`);
    }
  }

  return {
    /** Paths of the fields of `object` that its kind does not declare. */
    unknownFields(object: KubeObject): string[] {
      const type = rootTypes.get(`${object.apiVersion}/${object.kind}`);
      if (!type) return [`no declared type for ${object.apiVersion} ${object.kind}`];
      const unknown: string[] = [];
      walk(object, type, `${object.kind}/${object.metadata.name}`, unknown);
      return unknown;
    },
  };
}
