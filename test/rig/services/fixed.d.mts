export declare const HONESTY_BODY: string;
