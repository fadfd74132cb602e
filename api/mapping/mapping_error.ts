/** The typed failure of converting an API message to a TypeScript value. */

/** A proto message that does not describe a valid value; `field` names where. */
export class ResourceMappingError extends TypeError {
  override name = "ResourceMappingError";
  constructor(readonly field: string, message: string) {
    super(message);
  }
}
