/**
 * The three ATM deposits whose envelope images upstream's `get_atm_deposit_images_8473` has on
 * record (its fixed texts; the deposit date comes from the transaction).
 */
export const atmDepositImages: Readonly<Record<string, { readonly atm_id: string; readonly envelope_contents: string; readonly verification_notes: string }>> = {
  "btxn_834027370c20": {
    "atm_id": "ATM #3921",
    "envelope_contents": "\n=== ATM DEPOSIT ENVELOPE SCAN ===\nEnvelope ID: ENV-2025-3921-00923\nDeposit Time: 3:47 PM CST\nATM Location: Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX\n\n--- ENVELOPE CONTENTS ---\nItem 1: Personal Check\n  - Check Number: 7284\n  - Drawn On: First Texas Bank\n  - Payee: Derek Yamamoto\n  - Amount: $875.00\n  - Memo: \"October rent refund\"\n  - Signature: Present and legible\n  - Date on Check: 11/03/2025\n\nItem 2: Cash\n  - Denomination breakdown:\n    * 2 x $100 bills = $200.00\n    * 3 x $20 bills = $60.00\n  - Total Cash: $260.00\n\n--- DEPOSIT SUMMARY ---\nCheck Total: $875.00\nCash Total: $260.00\nGRAND TOTAL: $1,135.00\n\n--- MACHINE RECORD ---\nAmount Recorded by ATM: $385.00\nDISCREPANCY DETECTED: $750.00 difference\n\n--- IMAGE QUALITY ---\nEnvelope scan: CLEAR\nCheck front: CLEAR\nCheck back (endorsement): CLEAR - endorsed \"For Deposit Only - Derek Yamamoto\"\nCash image: CLEAR - bills visible and countable\n",
    "verification_notes": "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of $750.00 confirmed via image review."
  },
  "btxn_test_deposit_001": {
    "atm_id": "ATM #3921",
    "envelope_contents": "\n=== ATM DEPOSIT ENVELOPE SCAN ===\nEnvelope ID: ENV-2025-3921-00847\nDeposit Time: 2:34 PM EST\nATM Location: Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR\n\n--- ENVELOPE CONTENTS ---\nItem 1: Personal Check\n  - Check Number: 4821\n  - Drawn On: First National Bank\n  - Payee: Linda Patterson\n  - Amount: $875.00\n  - Memo: \"October rent refund\"\n  - Signature: Present and legible\n  - Date on Check: 11/05/2025\n\nItem 2: Cash\n  - Denomination breakdown:\n    * 2 x $100 bills = $200.00\n    * 3 x $20 bills = $60.00\n  - Total Cash: $260.00\n\n--- DEPOSIT SUMMARY ---\nCheck Total: $875.00\nCash Total: $260.00\nGRAND TOTAL: $1,135.00\n\n--- MACHINE RECORD ---\nAmount Recorded by ATM: $385.00\nDISCREPANCY DETECTED: $750.00 difference\n\n--- IMAGE QUALITY ---\nEnvelope scan: CLEAR\nCheck front: CLEAR\nCheck back (endorsement): CLEAR - endorsed \"For Deposit Only - Linda Patterson\"\nCash image: CLEAR - bills visible and countable\n",
    "verification_notes": "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of $750.00 confirmed via image review."
  },
  "btxn_test_atm_dep_partial": {
    "atm_id": "ATM #5847",
    "envelope_contents": "\n=== ATM DEPOSIT ENVELOPE SCAN ===\nEnvelope ID: ENV-2025-5847-00293\nDeposit Time: 10:15 AM EST\n\n--- ENVELOPE CONTENTS ---\nItem 1: Personal Check\n  - Check Number: 7392\n  - Amount: $500.00\n\n--- DEPOSIT SUMMARY ---\nCheck Total: $500.00\nCash Total: $0.00\nGRAND TOTAL: $500.00\n\n--- MACHINE RECORD ---\nAmount Recorded by ATM: $500.00\nNo discrepancy detected.\n",
    "verification_notes": "Images confirm deposit matches recorded amount. No discrepancy found."
  }
}
