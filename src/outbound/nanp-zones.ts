// The time zone of a US or Canadian number from its area code. The United States and Canada share
// the +1 plan and span many zones, so the country alone says nothing; the area code says enough
// for most numbers. Area codes whose territory straddles a zone boundary (850 in Florida, 270 in
// Kentucky, 541 in Oregon, 605 in South Dakota, 208 in Idaho, 928 in Arizona, which holds the
// Navajo Nation's daylight saving, …) are left out on purpose: their contacts take the campaign's
// zone (or their own `timezone` column) rather than a guess that could ring someone at 7 a.m.
// A number ported or kept after a move still carries its old area code; a `timezone` column wins.

const ZONES: Record<string, string> = {
  'America/New_York':
    '202 203 207 212 215 216 220 223 229 231 234 239 240 248 252 267 269 272 276 301 302 304 305 ' +
    '313 315 321 326 330 332 336 339 347 351 352 380 386 401 404 407 410 412 413 419 434 440 443 ' +
    '445 470 475 478 484 502 508 513 516 517 518 540 551 561 567 570 571 585 586 603 607 609 610 ' +
    '614 616 617 631 640 646 667 678 680 681 703 704 706 716 717 718 724 727 732 734 740 743 754 ' +
    '757 762 770 772 774 781 786 802 803 804 810 813 814 828 838 839 843 845 848 854 856 857 859 ' +
    '860 862 863 864 865 878 904 908 910 912 914 917 919 929 934 937 941 947 954 959 973 978 980 ' +
    '984 989 423',
  'America/Indiana/Indianapolis': '260 317 463 765',
  'America/Chicago':
    '205 210 214 217 218 224 225 228 251 254 256 262 281 309 312 314 316 318 319 320 325 331 ' +
    '334 337 346 361 402 405 409 414 417 430 432 447 464 469 479 501 504 507 512 515 531 534 539 ' +
    '563 573 580 601 608 612 615 618 629 630 636 641 651 659 660 662 682 708 712 713 715 726 731 ' +
    '737 763 769 773 779 806 815 816 817 830 832 847 870 872 901 903 913 918 920 936 938 940 945 ' +
    '952 956 972 979 985',
  'America/Denver': '303 307 385 406 435 505 575 719 720 801 915 970 983',
  'America/Phoenix': '480 520 602 623',
  'America/Los_Angeles':
    '206 209 213 253 279 310 323 341 350 360 408 415 424 425 442 458 503 509 510 530 559 562 564 ' +
    '619 626 628 650 657 661 669 702 707 714 725 747 760 775 805 818 820 831 840 858 909 916 925 ' +
    '949 951 971',
  'America/Anchorage': '907',
  'Pacific/Honolulu': '808',
  'America/Toronto':
    '226 249 263 289 343 354 365 367 416 418 437 438 450 514 519 548 579 581 613 647 705 819 873 905',
  'America/Winnipeg': '204 431 584',
  'America/Regina': '306 474 639',
  'America/Edmonton': '368 403 587 780 825',
  'America/Vancouver': '236 604 672 778',
  'America/Halifax': '782 902',
  'America/Moncton': '428 506',
};

const BY_AREA_CODE = new Map<string, string>();
for (const [zone, codes] of Object.entries(ZONES)) {
  for (const code of codes.split(/\s+/)) {
    if (/^\d{3}$/.test(code)) BY_AREA_CODE.set(code, zone);
  }
}

/** The IANA zone of a NANP national number (10 digits), or null when its area code is not listed. */
export function nanpZone(nationalNumber: string): string | null {
  return BY_AREA_CODE.get(nationalNumber.slice(0, 3)) ?? null;
}
