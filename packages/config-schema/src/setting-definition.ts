/**
 * The shape of a setting in the settings table: its variable, its schema, its docs, and how its
 * value is normalised.
 *
 * @module
 */
import type * as z from 'zod'

/** `tessera dev` (local, relaxed defaults) or `tessera start` (production). */
export type SettingsMode = 'dev' | 'start'

/** What a setting's `normalize` knows besides its own parsed value. */
export interface NormalizeContext {
  mode: SettingsMode
  /** TOKEN_EXPIRATION_IN_HOURS, parsed: JWKS_GRACE_HOURS defaults to twice it. */
  tokenExpirationHours: number
}

/** A setting's row in the settings tables of the docs. */
export interface SettingDoc {
  /**
   * The default column, for a default the schema does not hold (one that depends on the mode or
   * on another setting). Without it, the column is the schema's default in backquotes, or `—`.
   */
  default?: string
  /** The meaning column of docs/settings.md, in Markdown. */
  meaning: string
  /** A shorter flag that sets it too, shown after the variable (`--config`). */
  flag?: string
}

/** One row of the settings table (`SETTINGS`). */
export interface SettingDefinition<
  Env extends string = string,
  Schema extends z.ZodType<unknown, string | undefined> = z.ZodType<unknown, string | undefined>,
  Value = unknown,
> {
  /** The environment variable, and (lower-cased, `_` as `-`) its flag. */
  env: Env
  /** Reads the variable's text; unset and empty are both `undefined`. */
  schema: Schema
  doc: SettingDoc
  /** Turns the parsed value into the setting: the defaults of the mode, a derived default. */
  normalize(value: z.output<Schema>, context: NormalizeContext): Value
}

/** Declares one setting; without `normalize`, the setting is the value as read. */
export function setting<
  const Env extends string,
  Schema extends z.ZodType<unknown, string | undefined>,
  Value = z.output<Schema>,
>(definition: {
  env: Env
  schema: Schema
  doc: SettingDoc
  normalize?: (value: z.output<Schema>, context: NormalizeContext) => Value
}): SettingDefinition<Env, Schema, Value> {
  const identity = (value: z.output<Schema>) => value as Value
  return { ...definition, normalize: definition.normalize ?? identity }
}

/** `dev`'s value in `dev`, `start`'s otherwise. */
export const byMode =
  <Value>(values: Record<SettingsMode, Value>) =>
  (value: Value | undefined, { mode }: NormalizeContext): Value =>
    value ?? values[mode]
