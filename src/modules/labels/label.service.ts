import type { Scope } from '../../auth/scope';
import { isUniqueViolation, type Tx } from '../../db/prisma-errors';
import { badRequest, conflict, notFound } from '../../errors';
import type { Label } from '../../generated/prisma/client';
import { isUuid, parseInput, type Input } from '../../validation/parse';
import type { LabelRepository } from './label.repository';
import { createLabelSchema, listLabelsSchema, updateLabelSchema, type CreateLabelInput, type ListLabelsInput, type UpdateLabelInput } from './label.schemas';

/** Every workspace starts with these; they cannot be deleted or renamed. */
export const DEFAULT_LABELS = [
  { name: 'production', description: 'Production environment', colorCode: '#D92D20' },
  { name: 'staging', description: 'Staging environment', colorCode: '#F79009' },
  { name: 'development', description: 'Development environment', colorCode: '#12B76A' },
] as const;

export class LabelService {
  constructor(private readonly labels: LabelRepository) {}

  /** Workspace initialiser: the default labels of a new workspace. */
  readonly createDefaults = async (tx: Tx, scope: Scope): Promise<void> => {
    for (const label of DEFAULT_LABELS) await this.labels.create(scope, { ...label, isUniversal: true }, tx);
  };

  async create(scope: Scope, input: Input<CreateLabelInput>): Promise<Label> {
    const data = parseInput(createLabelSchema, input);
    return this.unique(data.name, () => this.labels.create(scope, data));
  }

  async list(scope: Scope, input: Input<ListLabelsInput> = {}): Promise<{ total: number; items: Label[] }> {
    const { search, currentPage, pageSize } = parseInput(listLabelsSchema, input);
    const { total, rows } = await this.labels.page(scope, { search, skip: currentPage * pageSize, take: pageSize });
    return { total, items: rows };
  }

  async get(scope: Scope, id: string): Promise<Label> {
    if (!isUuid(id)) throw badRequest(`Label id must be a UUID (got '${id}')`, 'id', 'invalid_id');
    const label = await this.labels.findById(scope, id);
    if (!label) throw notFound('Label', id);
    return label;
  }

  /** The labels of the scope with these ids; malformed, unknown and other tenants' ids are left out. */
  async findMany(scope: Scope, ids: readonly string[]): Promise<Label[]> {
    const valid = ids.filter(isUuid);
    return valid.length ? this.labels.findManyByIds(scope, valid) : [];
  }

  async update(scope: Scope, id: string, input: Input<UpdateLabelInput>): Promise<Label> {
    const data = parseInput(updateLabelSchema, input);
    const label = await this.get(scope, id);
    if (label.isUniversal && data.name !== undefined && data.name !== label.name) {
      throw badRequest(`The default label '${label.name}' cannot be renamed`, 'name', 'default_label');
    }
    const found = await this.unique(data.name ?? label.name, () => this.labels.update(scope, id, data));
    if (!found) throw notFound('Label', id);
    return this.get(scope, id);
  }

  async delete(scope: Scope, id: string): Promise<void> {
    const label = await this.get(scope, id);
    if (label.isUniversal) throw badRequest(`The default label '${label.name}' cannot be deleted`, 'id', 'default_label');
    if (!(await this.labels.delete(scope, id))) throw notFound('Label', id);
  }

  private async unique<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A label named '${name}' already exists in this workspace`, 'name', 'label_name_taken');
      throw err;
    }
  }
}
