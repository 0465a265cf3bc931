export * from './money';
export * from './validation';
export * from './flags';
export * from './countries';
export { default as messagesEn } from './i18n/en.json';
export { default as messagesFr } from './i18n/fr.json';
