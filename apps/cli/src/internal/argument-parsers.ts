import { InvalidArgumentError } from 'commander';

/** Commander argument parsers: each throws `InvalidArgumentError` with a short reason (printed as one line). */

export function parsePositiveInteger(max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (
      !/^\d+$/.test(value.trim()) ||
      !Number.isSafeInteger(number) ||
      number < 1 ||
      number > max
    ) {
      throw new InvalidArgumentError(`expected a whole number from 1 to ${max}.`);
    }
    return number;
  };
}

export function parsePositiveNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0) {
    throw new InvalidArgumentError('expected a number greater than 0.');
  }
  return number;
}

export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/i;

export function parseProjectId(value: string): string {
  if (!PROJECT_ID_PATTERN.test(value) || value.includes('..')) {
    throw new InvalidArgumentError(
      'use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    );
  }
  return value;
}

export function parsePort(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number > 65_535)
    throw new InvalidArgumentError('expected a port from 0 to 65535.');
  return number;
}

export function parseNonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}
