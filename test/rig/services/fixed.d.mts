export declare const HONESTY_BODY: string;
export declare const HONESTY_PAGE: string;
