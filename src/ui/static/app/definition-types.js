/**
 * The registry's declarations of the definition types (`GET ui/api/types`), read once per page load: the forms are
 * made from them (definition-form.js), so the console holds no list of fields of its own.
 */
import { uiApi } from './api.js';
/** @import { TypeDescription } from './api-types.js' */

/** @type {Promise<TypeDescription[]> | null} */
let loading = null;

/** @returns {Promise<TypeDescription[]>} */
async function fetchTypes() {
  /** @type {{ types: TypeDescription[] }} */
  const res = await uiApi('GET', 'api/types');
  return res.types;
}

/** @returns {Promise<TypeDescription[]>} */
export function typeDescriptions() {
  if (!loading)
    loading = fetchTypes().catch((/** @type {unknown} */ err) => {
      loading = null;
      throw err;
    });
  return loading;
}

/**
 * The declaration of one type; undefined for a name that is no definition type.
 * @param {string} name
 */
export async function typeDescription(name) {
  return (await typeDescriptions()).find((t) => t.name === name);
}
